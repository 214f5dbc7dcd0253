"""tensorflow code of the training fixture."""

def train(model, data):
    return 'tensorflow'  # ``` fence
