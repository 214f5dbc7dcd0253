"""keras code of the training fixture."""

def train(model, data):
    return 'keras'  # ``` fence
