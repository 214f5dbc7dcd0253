"""keras code of the precision fixture."""

def train(model, data):
    return 'keras'  # ``` fence
