"""The mirror served: the REST replica of the live API and what it is made of.

- `server.py`     `edt serve`: the REST API over the query layer (Starlette), on localhost
- `openapi.py`    the replica's OpenAPI 3.1 document, generated from the parameter definitions
- `ratelimit.py`  API keys (digests only) and per-minute rate limits per plan
- `web.py`        what the REST and MCP endpoints share: bearer key, client address, JSON answers
- `mcp_tools.py`  the MCP tools: the live service's five and the extension, over `Mirror`
- `mcp_server.py` the MCP server serving them (stdio, or mounted by `server.py`)
"""
