"""User-facing listings: one model definition and training step per framework, as popular
comparison articles show them (claim pytorch-concise counts their lines)."""
