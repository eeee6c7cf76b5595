"""What the benchmark JSON files record about the GPU run (one place)."""


def torch_device_and_version():
    """(GPU name, torch version) from the machine's PyTorch, ("", "") where it is unavailable."""
    try:
        import torch
        return torch.cuda.get_device_name(), torch.__version__
    except Exception:
        return "", ""
