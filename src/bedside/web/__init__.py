"""The web viewer and review app (`bedside serve`, extra `web`): FastAPI with server-rendered Jinja2 pages.

See :mod:`bedside.web.app` for the routes and their guards, :mod:`bedside.web.browse` for the viewer's queries,
:mod:`bedside.web.review` for reviews (items, assignments, labels, meta-evaluation, export and import).
"""
