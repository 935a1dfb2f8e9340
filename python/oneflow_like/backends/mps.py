"""flow.backends.mps (torch.backends.mps): Apple's Metal backend, which oneflow_like has not."""


def is_available():
    return False


def is_built():
    return False
