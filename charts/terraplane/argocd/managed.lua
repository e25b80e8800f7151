-- Argo CD health of a Terraplane managed resource (S3Bucket, Module, Object, ...).
-- Healthy: Ready, its latest generation applied. Progressing: being created, applied or
-- deleted. Suspended: a plan waits for approval (spec.approvedPlan). Degraded: a failure
-- (retried by the controller) or a change held until someone acts (Stalled).
local hs = {status = "Progressing", message = "waiting for the controller"}
if settled(hs, c.Ready ~= nil or c.Synced ~= nil or c.Reconciling ~= nil) then
  return hs
end
if c.Ready ~= nil and c.Ready.status == "True" then
  hs.status = "Healthy"
  hs.message = say(c.Ready)
  if c.Drifted ~= nil and c.Drifted.status == "True" then
    hs.message = hs.message .. "; " .. say(c.Drifted)
  end
  return hs
end
if c.Ready ~= nil then
  hs.message = say(c.Ready)
end
return hs
