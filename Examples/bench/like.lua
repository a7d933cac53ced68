-- wrk: POST /books/<id>/likes (one read-modify-write transaction per request); the path comes from the command.
wrk.method = "POST"
