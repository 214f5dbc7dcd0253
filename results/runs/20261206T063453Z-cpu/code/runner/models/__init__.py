"""Model families defined once, framework-neutral: a description (dlbench.runner.models.definitions),
one seeded set of initial weights in canonical layouts (dlbench.runner.models.weights), the settings
every framework is held to (dlbench.runner.models.conventions), and one builder per framework
(dlbench.runner.models.pytorch, .tensorflow, .keras) that loads exactly those weights; each family
declared once, naming those parts (dlbench.runner.models.families).

Canonical layouts: images NHWC, conv kernels (height, width, in, out), dense kernels
(in, out), LSTM kernels (in, 4*width) with gates in the order input, forget, cell, output,
and one LSTM bias per layer.
"""
