class NvidiaDriver:
    name = "nvidia"

    @staticmethod
    def is_active():
        return False
