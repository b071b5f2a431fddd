"""`GET /app/skills/<id>`: the page run_skill's `runUrl` names, a workflow skill's steps and how to run it.

It shows only the shipped catalogue (what list_skills shows every caller), so it needs no sign-in; it runs
nothing and carries no script.
"""

from __future__ import annotations

import html

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from toolhost.domains.recipes import service as recipes_service
from toolhost.domains.skills.service import WORKFLOWS_BY_ID
from toolhost.platform.websession import platform_of

HEADERS = {
    "Cache-Control": "public, max-age=300",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
}


async def skill_page(request: Request) -> HTMLResponse:
    """A workflow skill: its description, its recipe's steps and the tool calls that run it."""
    skill_id = str(request.path_params["skill_id"])
    workflow = WORKFLOWS_BY_ID.get(skill_id)
    if workflow is None:
        known = "".join(
            f'<li><a href="/app/skills/{html.escape(name)}">{html.escape(name)}</a></li>' for name in WORKFLOWS_BY_ID
        )
        body = f"<h1>No workflow skill named {html.escape(skill_id[:100])}</h1><ul>{known}</ul>"
        return HTMLResponse(_document("Skill not found", body), status_code=404, headers=HEADERS)
    recipe = recipes_service.get_recipe(workflow.recipe_slug)
    credits = recipes_service.estimated_credits(platform_of(request).registry, recipe)
    steps = "".join(
        f"<li>{html.escape(step.name)} <code>{html.escape(step.tool or step.type)}</code></li>" for step in recipe.steps
    )
    body = (
        f"<h1>{html.escape(workflow.name)}</h1>"
        f"<p>{html.escape(workflow.short_description)}</p>"
        f"<h2>Steps</h2><ol>{steps}</ol>"
        f"<p>About {credits} credits with the default inputs.</p>"
        "<h2>Run it</h2>"
        f"<p>Preview with <code>run_skill</code> (skill_id <code>{html.escape(skill_id)}</code>), then run with "
        f"<code>execute_recipe</code> (recipe_slug <code>{html.escape(recipe.slug)}</code>); "
        "<code>get_recipe_details</code> lists its inputs.</p>"
    )
    return HTMLResponse(_document(workflow.name, body), headers=HEADERS)


def _document(title: str, body: str) -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)} · toolhost</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}</style>"
        f"</head><body>{body}</body></html>"
    )


routes = [Route("/app/skills/{skill_id}", skill_page, methods=["GET"])]
