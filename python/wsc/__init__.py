"""wsc: compile PyTorch training steps for weight-streaming wafer-scale systems."""
