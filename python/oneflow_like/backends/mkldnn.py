"""flow.backends.mkldnn (torch.backends.mkldnn): oneDNN runs our CPU convolutions and GEMMs."""

enabled = True


def is_available():
    return True
