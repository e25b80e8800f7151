-- Argo CD health of the other Terraplane kinds that report conditions: classes
-- (ModuleClass, and the rollouts of every class of a Terraform kind), Providers and
-- ProviderConfigs, ClaimDefinitions, stacks and workloads.
-- Healthy: Ready, its latest generation checked (or no Ready condition at all: a Provider
-- reports only who uses it).
-- Progressing: its latest generation not checked yet (Reconciling), waiting for something
-- under way (Ready says what), a class's revision rolling out, or being deleted.
-- Suspended: a class's rollout paused on request.
-- Degraded: the last reconcile failed (Synced=False), it cannot be used until someone
-- acts (Stalled, or Ready=False from a controller that writes no Stalled), or a class's
-- rollout paused on a failure.
local hs = {status = "Healthy", message = ""}
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
  hs.status = "Progressing"
  hs.message = "deleting"
  if c.InUse ~= nil and c.InUse.status == "True" then
    hs.message = "deleting: " .. say(c.InUse)
  end
  return hs
end
if c.Synced ~= nil and c.Synced.status == "False" then
  hs.status = "Degraded"
  hs.message = say(c.Synced)
  return hs
end
local generation = obj.metadata.generation or 0
if c.Stalled ~= nil and c.Stalled.status == "True" and (c.Stalled.observedGeneration or 0) == generation then
  hs.status = "Degraded"
  hs.message = say(c.Stalled)
  return hs
end
local reconciling = c.Reconciling ~= nil and c.Reconciling.status == "True"
local behind = obj.status ~= nil and obj.status.observedGeneration ~= nil and obj.status.observedGeneration < generation
if c.Ready == nil then
  if c.InUse ~= nil then
    hs.message = say(c.InUse)
  elseif c.Synced == nil and c.RolloutPaused == nil then
    hs.status = "Progressing"
    hs.message = "waiting for the controller"
    return hs
  end
else
  hs.message = say(c.Ready)
  if reconciling or behind then
    hs.status = "Progressing"
    if c.Ready.status == "True" then
      hs.message = "generation " .. generation .. " is not checked yet"
    end
    return hs
  end
  if c.Ready.status ~= "True" then
    local waiting = c.Ready.status == "Unknown" or c.Ready.reason == "Pending" or string.find(c.Ready.reason, "^Waiting") ~= nil or
      (c.Synced ~= nil and c.Synced.reason == c.Ready.reason)
    if waiting then
      hs.status = "Progressing"
    else
      hs.status = "Degraded"
    end
    return hs
  end
end
if c.RolloutPaused ~= nil and (c.RolloutPaused.status == "True" or c.RolloutPaused.reason == "RolloutProgressing") then
  hs.message = say(c.RolloutPaused)
  if c.RolloutPaused.status ~= "True" then
    hs.status = "Progressing"
  elseif c.RolloutPaused.reason == "RolloutPauseRequested" then
    hs.status = "Suspended"
  else
    hs.status = "Degraded"
  end
end
return hs
