--[[
schedmate job_submit.lua: asks the local schedmate service for a duration estimate when a batch
job is submitted, and applies what the service's submit policy answers (a note in the job's
Comment, a time limit when the user gave none, or a cap on an over-long one).

Contract with slurmctld (which calls slurm_job_submit while holding its locks):
  * never blocks long: one curl call bounded by `timeout_s` (default 1 s, connect 0.5 s);
  * never rejects a job: on ANY failure (no service, timeout, garbage reply, a Lua error) the job
    is accepted unchanged;
  * the user's script never reaches a shell: it is written to a private temp file (mkstemp via
    os.tmpname) and sent with curl --data-binary @file; every value placed on the command line is
    either a number or filtered to a safe character set.

Settings: schedmate_submit.conf beside this file (key=value lines):
  url=http://127.0.0.1:8787/v1/estimate   timeout_s=1   curl=/usr/bin/curl   enabled=1
The policy itself (off|note|set|cap, margins) lives in the service's configuration, so one file
governs it; the reply is key=value lines:
  estimate_s=<seconds>  time_limit_min=<minutes, only when the policy sets one>
  comment=<text for Comment>  message=<text shown to the user by sbatch>
]]

local NO_VAL = 4294967294

local function this_dir()
   local src = debug.getinfo(1, "S").source or ""
   src = src:gsub("^@", "")
   return src:match("^(.*)/[^/]*$") or "."
end

local function read_conf()
   local conf = { url = "http://127.0.0.1:8787/v1/estimate", timeout_s = "1",
                  curl = "/usr/bin/curl", enabled = "1" }
   local f = io.open(this_dir() .. "/schedmate_submit.conf", "r")
   if f then
      for line in f:lines() do
         local k, v = line:match("^%s*([%w_]+)%s*=%s*(.-)%s*$")
         if k and not line:match("^%s*#") then conf[k] = v end
      end
      f:close()
   end
   return conf
end

-- Keeps only characters that are harmless inside single quotes and a URL query.
local function safe(s, max_len)
   s = tostring(s or ""):gsub("[^%w%.%-_:/,=]", "")
   return s:sub(1, max_len or 200)
end

local function parse_reply(text)
   local reply = {}
   for line in (text or ""):gmatch("[^\n]+") do
      local k, v = line:match("^([%w_]+)=(.*)$")
      if k then reply[k] = v end
   end
   return reply
end

local function ask_service(job_desc, submit_uid)
   local conf = read_conf()
   if conf.enabled == "0" then return nil end
   local url, curl = conf.url, conf.curl
   if url:find("'", 1, true) or curl:find("'", 1, true) then return nil end
   local timeout = tonumber(conf.timeout_s) or 1
   if timeout <= 0 or timeout > 5 then timeout = 1 end

   local tmp = os.tmpname()
   local f = io.open(tmp, "wb")
   if not f then os.remove(tmp); return nil end
   f:write(job_desc.script or "")
   f:close()

   local limit = job_desc.time_limit
   if limit == nil or limit == NO_VAL or limit >= NO_VAL then limit = "" end
   local nodes = job_desc.min_nodes
   if nodes == nil or nodes >= NO_VAL then nodes = "" end
   local query = string.format(
      "format=kv&uid=%s&name=%s&partition=%s&time_limit_min=%s&nodes=%s&tres_per_node=%s&tres_per_job=%s",
      safe(submit_uid, 12), safe(job_desc.name, 100), safe(job_desc.partition, 64),
      safe(limit, 12), safe(nodes, 12), safe(job_desc.tres_per_node, 100),
      safe(job_desc.tres_per_job, 100))
   local cmd = string.format(
      "'%s' -s -f -m %s --connect-timeout 0.5 -X POST -H 'Content-Type: text/plain' " ..
      "--data-binary @'%s' '%s?%s' 2>/dev/null",
      curl, tostring(timeout), tmp, url, query)
   local p = io.popen(cmd, "r")
   local out = p and p:read("*a") or ""
   if p then p:close() end
   os.remove(tmp)
   return parse_reply(out)
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   if job_desc.script == nil or job_desc.script == "" then return slurm.SUCCESS end
   local ok, reply = pcall(ask_service, job_desc, submit_uid)
   if not ok then
      slurm.log_info("schedmate: estimate skipped: %s", tostring(reply))
      return slurm.SUCCESS
   end
   if reply == nil or reply.estimate_s == nil then
      return slurm.SUCCESS   -- service down or silent: accept unchanged
   end
   local minutes = tonumber(reply.time_limit_min)
   if minutes and minutes >= 1 and minutes < NO_VAL then
      job_desc.time_limit = math.floor(minutes)
   end
   if reply.comment and reply.comment ~= "" then
      local c = reply.comment:sub(1, 500)
      if job_desc.comment and job_desc.comment ~= "" then
         job_desc.comment = job_desc.comment .. " | " .. c
      else
         job_desc.comment = c
      end
   end
   if reply.message and reply.message ~= "" then
      slurm.log_user("%s", reply.message:sub(1, 500))
   end
   return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   return slurm.SUCCESS
end

return slurm.SUCCESS
