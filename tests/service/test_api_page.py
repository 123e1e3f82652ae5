"""The API page as a newcomer opens it (issue 37): ``/docs`` works with no network, "Authorize"
takes a token, every answer has a schema, and errors are documented as they are sent."""

from __future__ import annotations

import re

import pytest

from memory_pg.service import schemas

ASSET = re.compile(r"""(?:src|href)=["']([^"']+)["']""")


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_api_pages_load_everything_from_the_service_itself(service, page):
    with service.client() as c:
        r = c.get(page)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        # Nothing from a CDN or a font service: the page works where only the service is.
        assert "://" not in r.text, re.findall(r"\S*://\S*", r.text)
        assets = ASSET.findall(r.text)
        assert any(a.endswith(".js") for a in assets), assets
        for asset in assets:
            got = c.get(asset)
            assert got.status_code == 200, asset
            assert len(got.content) > 1000, asset
        assert "/openapi.json" in r.text


def test_openapi_offers_the_bearer_token_on_every_v1_route(service):
    with service.client() as c:
        spec = c.get("/openapi.json").json()
    scheme = spec["components"]["securitySchemes"]["token"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
    assert "memory-pg token create" in scheme["description"]
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            needs = op.get("security") == [{"token": []}]
            assert needs == path.startswith("/v1/"), (method, path)


def test_every_answer_has_a_schema_and_every_error_is_the_real_error_body(service):
    with service.client() as c:
        spec = c.get("/openapi.json").json()
    components = spec["components"]["schemas"]
    # FastAPI's validation error is never sent, so it is not documented either.
    assert "HTTPValidationError" not in components and "ValidationError" not in components
    assert components["ErrorDetail"]["required"] == ["type", "message"]
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            where = f"{method.upper()} {path}"
            success = [code for code in op["responses"] if code.startswith("2")]
            assert len(success) == 1, where
            if success[0] != "204":
                content = op["responses"][success[0]]["content"]
                for media, body in content.items():
                    if media == "application/json":
                        assert body["schema"].get("$ref"), where
                    else:  # export's JSON lines, the graph's text and dot, the metrics
                        assert media.split(";")[0] in (
                            "application/x-ndjson",
                            "text/plain",
                            "text/vnd.graphviz",
                        ), where
                        assert body.get("schema", {"type": "string"}) == {"type": "string"}
            errors = [code for code in op["responses"] if code.startswith(("4", "5"))]
            if path.startswith("/v1/"):
                assert {"400", "401", "403", "422", "503"} <= set(errors), where
            for code in errors:
                answer = op["responses"][code]
                assert answer["description"] != "Validation Error", where
                assert answer["content"] == {
                    "application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}
                }, (where, code)


def test_every_body_field_says_what_it_is_for(service):
    with service.client() as c:
        components = c.get("/openapi.json").json()["components"]["schemas"]
    bodies = ["AddBody", "MemoryIn", "BatchBody", "SearchBody", "ReplaceBody", "EraseBody"]
    for name in bodies:
        for field, schema in components[name]["properties"].items():
            assert len(schema.get("description", "")) > 10, (name, field)


def test_real_answers_match_the_documented_schemas(service, fresh_user):
    """The schemas are not decoration: what the routes send validates against them."""
    token = service.token(fresh_user("ana")).token
    with service.client(token) as c:
        created = c.post("/v1/memories", json={"text": "Ana works at Acme in Lisbon"})
        memory_id = schemas.Created.model_validate(created.json()).id
        batch = c.post("/v1/memories/batch", json={"items": [{"text": "We picked PostgreSQL"}]})
        schemas.CreatedMany.model_validate(batch.json())
        found = c.post("/v1/search", json={"query": "where does Ana work"}).json()
        assert schemas.Results.model_validate(found).results[0].id == memory_id
        schemas.Memories.model_validate(c.get("/v1/memories").json())
        schemas.Memory.model_validate(c.get(f"/v1/memories/{memory_id}").json())
        replaced = c.put(f"/v1/memories/{memory_id}", json={"text": "Ana works at Initech"})
        schemas.Replaced.model_validate(replaced.json())
        schemas.Events.model_validate(c.get(f"/v1/memories/{memory_id}/history").json())
        schemas.Events.model_validate(c.get("/v1/history").json())
        schemas.Restored.model_validate(c.post(f"/v1/memories/{memory_id}/restore").json())
        schemas.Stats.model_validate(c.get("/v1/stats").json())
        schemas.Related.model_validate(c.get(f"/v1/memories/{memory_id}/related").json())
        entities = schemas.Entities.model_validate(c.get("/v1/entities").json())
        name = entities.entities[0].name
        schemas.Entity.model_validate(c.get(f"/v1/entities/{name}").json())
        schemas.Graph.model_validate(c.get(f"/v1/entities/{name}/graph").json())
        missing = c.get("/v1/memories/00000000-0000-0000-0000-000000000000")
        assert missing.status_code == 404
        schemas.ErrorBody.model_validate(missing.json())
        invalid = c.post("/v1/search", json={"top_k": "x"})
        assert invalid.status_code == 422
        assert schemas.ErrorBody.model_validate(invalid.json()).error.type == "InvalidRequest"
        schemas.Deleted.model_validate(c.request("DELETE", "/v1/user").json())
