class AscendDriver:
    name = "ascend"

    @staticmethod
    def is_active():
        return False
