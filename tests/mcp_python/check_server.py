"""Drives Prism's MCP server with the official Python SDK (1.x or 2.x), as tests/mcp_python.rs asks.

    python check_server.py stdio COMMAND [ARG...]     # the server is a child process
    python check_server.py http URL                   # the server listens at URL

Checks a listing, a good call, a denied call, bad arguments, a call needing approval (the
elicitation callback approves it), and a cancelled call (the server counts cancellations). Prints
one line per check and exits non-zero on the first failure.
"""

import sys
from importlib.metadata import version

import anyio

MCP_VERSION = version("mcp")
MAJOR = int(MCP_VERSION.split(".")[0])

if MAJOR >= 2:
    import mcp_types as types
else:
    import mcp.types as types


def is_error(result):
    # 2.x names fields in snake case, 1.x as on the wire.
    return getattr(result, "is_error", None) if MAJOR >= 2 else result.isError


def text_of(result):
    return " ".join(block.text for block in result.content if getattr(block, "text", None) is not None)


def check(ok, what, detail=""):
    print(f"{'ok' if ok else 'FAILED'}: {what} {detail}".rstrip(), flush=True)
    if not ok:
        sys.exit(1)


async def approve(_context, params):
    check("wipe" in params.message, "the approval question names the tool", repr(params.message))
    return types.ElicitResult(action="accept", content={"approve": True})


async def checks(call, list_tools, cancel_slow):
    tools = await list_tools()
    names = [tool.name for tool in tools]
    check("add" in names and "hidden" not in names, "tools/list shows allowed tools only", str(names))
    add = next(tool for tool in tools if tool.name == "add")
    check(add.title == "Add", "the tool's title is listed", repr(add.title))

    result = await call("add", {"a": 2, "b": 3})
    check(not is_error(result) and text_of(result) == "5", "a good call", text_of(result))

    result = await call("hidden", {})
    check(is_error(result) and "denied" in text_of(result), "a denied call", text_of(result))

    result = await call("multiply", {"a": "two", "b": 2})
    check(is_error(result) and "`a`" in text_of(result), "bad arguments", text_of(result))

    result = await call("wipe", {"path": "/tmp/py"})
    check(not is_error(result) and text_of(result) == "wiped /tmp/py", "a call needing approval", text_of(result))

    before = int(text_of(await call("cancellations", {})))
    await cancel_slow()
    for _ in range(100):
        after = int(text_of(await call("cancellations", {})))
        if after > before:
            break
        await anyio.sleep(0.05)
    check(after == before + 1, "a cancelled call is cancelled on the server", f"{before} -> {after}")


async def main(transport, target):
    print(f"mcp {MCP_VERSION} over {transport}", flush=True)
    if MAJOR >= 2:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        server = StdioServerParameters(command=target[0], args=target[1:]) if transport == "stdio" else target[0]
        async with Client(server, elicitation_callback=approve) as client:
            print(f"negotiated {client.protocol_version}", flush=True)

            async def list_tools():
                return (await client.list_tools()).tools

            async def cancel_slow():
                # 2.x cancels structurally: leaving the scope ends the request (its HTTP stream,
                # or a notifications/cancelled over stdio).
                with anyio.move_on_after(1.0):
                    await client.call_tool("slow", {})
                    check(False, "the slow call returned instead of being cancelled")

            await checks(client.call_tool, list_tools, cancel_slow)
        return

    from mcp import ClientSession

    if transport == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        opened = stdio_client(StdioServerParameters(command=target[0], args=target[1:]))
    else:
        from mcp.client.streamable_http import streamablehttp_client

        opened = streamablehttp_client(target[0])
    async with opened as streams:
        async with ClientSession(streams[0], streams[1], elicitation_callback=approve) as session:
            initialized = await session.initialize()
            print(f"negotiated {initialized.protocolVersion}", flush=True)

            async def list_tools():
                return (await session.list_tools()).tools

            async def cancel_slow():
                # 1.x has no call to cancel a request: send the notification a client sends when
                # its user presses stop, for the id the SDK gives the next request.
                request_id = session._request_id
                async with anyio.create_task_group() as group:
                    group.start_soon(session.call_tool, "slow", {})
                    await anyio.sleep(0.5)
                    cancelled = types.CancelledNotification(
                        params=types.CancelledNotificationParams(requestId=request_id, reason="stop")
                    )
                    await session.send_notification(types.ClientNotification(cancelled))
                    await anyio.sleep(0.2)
                    group.cancel_scope.cancel()

            await checks(session.call_tool, list_tools, cancel_slow)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2:])
