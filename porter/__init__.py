"""porter: port PyTorch CUDA training repositories to Cambricon MLU and Hygon DCU / ROCm."""

__version__ = "0.1.0"
