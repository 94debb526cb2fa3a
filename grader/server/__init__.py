"""`kata serve`: a grading server whose hidden tests never leave it.

An interviewer runs the server (FastAPI on uvicorn, SQLAlchemy on SQLite or PostgreSQL) and makes an
assignment with `kata serve admin`; candidates join it with `kata interview join URL TOKEN`, grade the
public tests on their own machine, and upload with `kata interview submit`. The server keeps the
secret seed, grades each upload with the hidden tests in a separate worker process (grade_job.py),
through a durable queue in the database (jobs.py), and shows the candidate only what the interviewer
chose (views.py). docs/server.md describes a deployment.

Modules: models (tables), database (engine, migrations), tokens (secrets at rest), assignments
(the interviewer's library), jobs (the queue), pool (local workers and Ray), app (HTTP), views
(what a candidate sees), client (the candidate's side).
"""
