NAME = "cann"
