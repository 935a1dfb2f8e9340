"""flow.backends.openmp (torch.backends.openmp): oneDNN's CPU kernels run on OpenMP threads."""


def is_available():
    return True
