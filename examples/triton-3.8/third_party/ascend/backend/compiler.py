class AscendBackend:
    name = "ascend"

    def __init__(self, target=None):
        self.target = target
