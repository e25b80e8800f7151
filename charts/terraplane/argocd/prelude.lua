-- Shared by the health scripts of claims and managed resources, ahead of each: the
-- object's conditions by type (c), how a condition reads (say), and settled, the states
-- both read alike.
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
local generation = obj.metadata.generation or 0
-- settled writes into hs what decides a claim's or a managed resource's health before
-- its own last word, and says whether something did: being deleted; no status yet
-- (reported false); its latest generation failed (Degraded) or holds a plan for
-- approval (Suspended); Stalled (Degraded); its latest generation not applied yet.
local function settled(hs, reported)
  if obj.metadata.deletionTimestamp ~= nil then
    hs.message = "deleting"
    if c.Synced ~= nil and c.Synced.status == "False" then
      hs.message = "deleting: " .. say(c.Synced)
    end
    return true
  end
  if not reported then
    return true
  end
  local synced = c.Synced
  if synced ~= nil and synced.status == "False" and (synced.observedGeneration or 0) == generation then
    if synced.reason == "AwaitingApproval" or synced.reason == "ProviderUpgrade" then
      hs.status = "Suspended"
    else
      hs.status = "Degraded"
    end
    hs.message = say(synced)
    return true
  end
  if c.Stalled ~= nil and c.Stalled.status == "True" and (c.Stalled.observedGeneration or 0) == generation then
    hs.status = "Degraded"
    hs.message = say(c.Stalled)
    return true
  end
  if (obj.status.observedGeneration or 0) < generation or (c.Reconciling ~= nil and c.Reconciling.status == "True") then
    hs.message = "generation " .. generation .. " is not applied yet"
    if c.Reconciling ~= nil and c.Reconciling.status == "True" then
      hs.message = say(c.Reconciling)
    end
    return true
  end
  return false
end
