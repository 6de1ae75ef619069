NAME = "hip"
