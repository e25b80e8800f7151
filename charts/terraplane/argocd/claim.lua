-- Argo CD health of a Terraplane claim (Bucket, PostgreSQLInstance, a kind a
-- ClaimDefinition defines, ...). Healthy: Ready, its latest generation applied to its
-- resource. Progressing: being bound, provisioned, applied or deleted. Suspended: its
-- resource's plan waits for approval. Degraded: a failure (retried by the controllers) or
-- a change held until someone acts (Stalled).
local hs = {status = "Progressing", message = "waiting for the controller"}
if settled(hs, c.Ready ~= nil or c.Synced ~= nil) then
  return hs
end
if c.Ready ~= nil and c.Ready.status == "True" then
  hs.status = "Healthy"
  hs.message = "bound to its resource, which is ready"
  return hs
end
if c.Ready ~= nil then
  hs.message = say(c.Ready)
end
if obj.status.bindingPhase == "Unbound" and c.Synced ~= nil and c.Synced.status == "True" then
  hs.message = "binding: " .. hs.message
end
return hs
