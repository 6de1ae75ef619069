class AmdDriver:
    name = "amd"

    @staticmethod
    def is_active():
        return False
