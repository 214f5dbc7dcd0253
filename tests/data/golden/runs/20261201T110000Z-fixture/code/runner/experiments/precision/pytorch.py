"""pytorch code of the precision fixture."""

def train(model, data):
    return 'pytorch'  # ``` fence
