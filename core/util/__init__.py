"""Small helpers every part uses: JSON output (``jsonout``), the clock (``timeutil``) and the
optional OpenAI-compatible LLM client (``llm``, off unless configured)."""
