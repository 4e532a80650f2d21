"""Checks: faithfulness, retrieval relevance, response relevance, and the Evaluator that runs them."""
