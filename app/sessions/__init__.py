"""Classroom sessions: a presenter moves the class, students follow over Server-Sent Events,
the bug lab's poll collects their answers (docs/api.md, "Sessions").

`codes` (join codes, presenter keys), `state` (fields, request bodies, the two views), `store`
(the interface and the in-process back end), `redis_store` (the Redis back end), `hub` (this
process's streams), `rules` (what a change may say), `service` (all of it for the routes).
"""
