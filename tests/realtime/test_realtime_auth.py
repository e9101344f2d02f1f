"""Bearer token: required beyond loopback; enforced on the API and the MCP mount."""

from __future__ import annotations

import httpx
import pytest

from realtime.auth import AuthConfigError, check_bind, is_loopback


def test_bind_rules() -> None:
    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        assert is_loopback(host)
        check_bind(host, None)
    for host in ("0.0.0.0", "192.168.1.4", "::", "example.org", ""):
        assert not is_loopback(host)
        with pytest.raises(AuthConfigError, match="GLYPHOXA_API_TOKEN"):
            check_bind(host, None)
        check_bind(host, "s3cret")


def test_serve_refuses_public_bind_without_token(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from glyphoxa_pipelines.cli import app

    monkeypatch.delenv("GLYPHOXA_API_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "GLYPHOXA_API_TOKEN" in result.output


async def test_token_required(rt_service, rt_seed) -> None:  # type: ignore[no-untyped-def]
    from realtime.api.app import create_app

    app = create_app(rt_service, token="s3cret", mount_mcp=True, open_service=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        assert (await client.get("/healthz")).status_code == 200
        url = f"/v1/sessions/{rt_seed.live_session}/npcs/thaldrin/context"
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
            r = await client.get(url, headers=headers)
            assert r.status_code == 401 and r.json()["error"] == "unauthorized"
            assert r.headers["www-authenticate"] == "Bearer"
        r = await client.post("/mcp", json={})
        assert r.status_code == 401
        r = await client.get(url, headers={"Authorization": "Bearer s3cret"})
        assert r.status_code == 200
        r = await client.get("/v1/tools", headers={"Authorization": "Bearer s3cret"})
        assert r.status_code == 200
