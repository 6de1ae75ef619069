NAME = "cuda"
