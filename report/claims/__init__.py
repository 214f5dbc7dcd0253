"""Common claims (claims.yaml) checked against a release: vocabulary, rules."""
