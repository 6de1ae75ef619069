class AmdBackend:
    name = "amd"

    def __init__(self, target=None):
        self.target = target
