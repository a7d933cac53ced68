-- wrk: POST /books with a new id each time (one insert and one list append per transaction).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local threads = 0
function setup(thread)
    threads = threads + 1
    thread:set("prefix", tostring(os.time()) .. "-" .. threads)
end

local counter = 0
function request()
    counter = counter + 1
    local body = string.format('{"id":"b-%s-%d","title":"Bench","year":2000,"authorID":"bench"}', prefix, counter)
    return wrk.format(nil, "/books", nil, body)
end
