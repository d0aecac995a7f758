"""The in-process test server (tests/support/webapp.py): it holds its port from the moment it picks it, so another
server of the test session (another worker's app, a PostgreSQL server, a subprocess) cannot take it before uvicorn
starts listening. CI once failed on exactly that: ``address already in use`` on a port found free a moment before."""

from __future__ import annotations

import errno
import socket

import httpx
import uvicorn
from support.webapp import running_app


def test_the_server_holds_its_port_before_another_server_can_take_it(small_arena, monkeypatch):
    intruders = []
    run = uvicorn.Server.run

    def someone_binds_the_port_first(server, *args, **kwargs):
        """Between the port's choice and uvicorn's start, another process binds the same port (if it can)."""
        intruder = socket.socket()
        try:
            intruder.bind(("127.0.0.1", server.config.port))
        except OSError as error:
            assert error.errno == errno.EADDRINUSE
            intruder.close()
        else:
            intruders.append(intruder)
        return run(server, *args, **kwargs)

    monkeypatch.setattr(uvicorn.Server, "run", someone_binds_the_port_first)
    try:
        with running_app(small_arena.settings) as url:
            assert httpx.get(url + "config", timeout=30).status_code == 200
    finally:
        for intruder in intruders:
            intruder.close()
    assert not intruders, "another socket could bind the test server's port before the server started"


def test_ports_for_subprocess_servers_are_free_and_outside_the_kernels_ephemeral_range():
    from tools.ports import ephemeral_range, free_port

    low, high = ephemeral_range()
    ports = [free_port() for _ in range(20)]
    for port in ports:
        assert 1024 < port < low <= high  # where bind(0) and outgoing connections never land
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))
    assert len(set(ports)) > 1  # drawn from the operating system's randomness, which no seed repeats
