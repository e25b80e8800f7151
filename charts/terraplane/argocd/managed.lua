-- Argo CD health of a Terraplane managed resource (S3Bucket, Module, Object, ...).
-- Healthy: Ready, its latest generation applied. Progressing: being created, applied or
-- deleted. Suspended: a plan waits for approval (spec.approvedPlan). Degraded: a failure
-- (retried by the controller) or a change held until someone acts (Stalled).
local hs = {status = "Progressing", message = "waiting for the controller"}
local c = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, cond in ipairs(obj.status.conditions) do
    c[cond.type] = cond
  end
end
local function say(cond)
  if cond.message ~= nil and cond.message ~= "" then
    return cond.reason .. ": " .. cond.message
  end
  return cond.reason
end
if obj.metadata.deletionTimestamp ~= nil then
  hs.message = "deleting"
  if c.Synced ~= nil and c.Synced.status == "False" then
    hs.message = "deleting: " .. say(c.Synced)
  end
  return hs
end
if c.Ready == nil and c.Synced == nil and c.Reconciling == nil then
  return hs
end
local generation = obj.metadata.generation or 0
local synced = c.Synced
if synced ~= nil and synced.status == "False" and (synced.observedGeneration or 0) == generation then
  if synced.reason == "AwaitingApproval" or synced.reason == "ProviderUpgrade" then
    hs.status = "Suspended"
  else
    hs.status = "Degraded"
  end
  hs.message = say(synced)
  return hs
end
if c.Stalled ~= nil and c.Stalled.status == "True" and (c.Stalled.observedGeneration or 0) == generation then
  hs.status = "Degraded"
  hs.message = say(c.Stalled)
  return hs
end
if (obj.status.observedGeneration or 0) < generation or (c.Reconciling ~= nil and c.Reconciling.status == "True") then
  hs.message = "generation " .. generation .. " is not applied yet"
  if c.Reconciling ~= nil and c.Reconciling.status == "True" then
    hs.message = say(c.Reconciling)
  end
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
