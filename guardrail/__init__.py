"""guardrail: real-time guardrails for RAG."""
