"""Scorers: NLI cross-encoder and bi-encoder embeddings, on onnxruntime or torch."""
