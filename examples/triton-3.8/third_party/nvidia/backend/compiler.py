class NvidiaBackend:
    name = "nvidia"

    def __init__(self, target=None):
        self.target = target
