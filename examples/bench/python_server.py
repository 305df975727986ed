"""Server C of the MCP load benchmark (`mcp_load`): the official Python MCP SDK's server.

Serves one tool, `search_documents`, over streamable HTTP with stateful sessions, at
http://127.0.0.1:PORT/mcp. It does not port the search: `mcp_load` runs the Rust search for its
fixed query and passes the result's JSON in a file, and this server returns that JSON for that
query (any other query is an error), so all three servers send the same output.

usage: python_server.py PORT EXPECTED_JSON_FILE QUERY
"""

import json
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer


def main() -> None:
    port = int(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        expected: dict[str, Any] = json.load(f)
    fixed_query = sys.argv[3]

    server = MCPServer("bench-python", log_level="WARNING")

    @server.tool(structured_output=True)
    def search_documents(
        query: str,
        source_types: list[str] | None = None,
        date_from: str | None = None,
        top_k: int = 8,
    ) -> dict[str, Any]:
        """Finds evidence candidates in internal documents."""
        if query != fixed_query:
            raise ValueError("this benchmark server answers only its fixed query")
        return expected

    server.run(transport="streamable-http", host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
