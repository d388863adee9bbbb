-- Child of scrape.lua: scrape with the bearer token from STRATA_TEST_TOKEN.
local counters = require "strata.counters"
local s = counters.prometheus_scrape { url = os.getenv("STRATA_TEST_URL"),
                                       bearer_env = "STRATA_TEST_TOKEN", timeout = 5 }
print(#s)
