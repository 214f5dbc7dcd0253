"""tensorflow code of the precision fixture."""

def train(model, data):
    return 'tensorflow'  # ``` fence
