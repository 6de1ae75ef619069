class BaseBackend:
    pass
