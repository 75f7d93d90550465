"""Drive `unity-assets mcp` with the official MCP Python SDK (PyPI `mcp`).

    python mcp_python_client.py stdio BINARY PROJECT
    python mcp_python_client.py http URL

Initializes, lists tools and resources, calls `search` and `pick`, starts a
long call (`slow`, a pipeline the test project adds) and cancels it, then
checks the server still answers. Prints one JSON document: what it saw.
"""

import asyncio
import json
import sys
import time
from contextlib import asynccontextmanager

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client


@asynccontextmanager
async def connect(argv):
    if argv[0] == "stdio":
        params = StdioServerParameters(command=argv[1], args=["--project", argv[2], "--trust", "mcp"])
        async with stdio_client(params) as (read, write):
            yield read, write
    else:
        async with streamablehttp_client(argv[1]) as (read, write, _session_id):
            yield read, write


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def main(argv):
    seen = {}
    async with connect(argv) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            seen["server"] = init.serverInfo.name
            tools = await session.list_tools()
            seen["tools"] = sorted(t.name for t in tools.tools)
            seen["search_schema"] = next(t.inputSchema for t in tools.tools if t.name == "search")

            search = await session.call_tool("search", {"query": "zombie enemy character"})
            seen["search"] = {
                "is_error": bool(search.isError),
                "status": (search.structuredContent or {}).get("status"),
                "text": text_of(search),
            }
            pick = await session.call_tool("pick", {"index": "0"})
            seen["pick"] = {"is_error": bool(pick.isError), "text": text_of(pick)}
            bad_pick = await session.call_tool("pick", {"index": "99"})
            seen["bad_pick"] = {"is_error": bool(bad_pick.isError), "text": text_of(bad_pick)}

            resources = await session.list_resources()
            seen["resources"] = sorted(str(r.uri) for r in resources.resources)
            result = await session.read_resource("unity-assets://search-result.json")
            seen["search_result_query"] = json.loads(result.contents[0].text).get("query")

            progress = []

            async def on_progress(done, total, message):
                progress.append([done, total, message])

            await session.call_tool("reindex", {}, progress_callback=on_progress)
            seen["reindex_progress"] = len(progress)

            # Cancel a long call: the id the SDK gives the next request.
            request_id = session._request_id
            started = time.monotonic()
            slow = asyncio.create_task(session.call_tool("slow", {}))
            await asyncio.sleep(1.0)
            await session.send_notification(
                types.ClientNotification(
                    types.CancelledNotification(
                        params=types.CancelledNotificationParams(requestId=request_id, reason="test")
                    )
                )
            )
            # A cancelled request gets no answer; the client stops waiting.
            done, _ = await asyncio.wait({slow}, timeout=3.0)
            if not done:
                slow.cancel()
            after = await session.call_tool("list_pipelines", {})
            seen["cancel"] = {
                "seconds": round(time.monotonic() - started, 2),
                "answered_after": not after.isError,
            }
    print(json.dumps(seen, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
