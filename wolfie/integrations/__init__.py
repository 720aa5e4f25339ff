"""Retrievers for agent frameworks, over a Pack in this process: LangChain
(:mod:`wolfie.integrations.langchain`, extra ``langchain``) and LlamaIndex
(:mod:`wolfie.integrations.llama_index`, extra ``llama-index``). Both rank through the
front door the CLI, MCP and REST share, and reward the episode their results came from."""
