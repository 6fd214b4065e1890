-- Argo CD health of a RuntimePolicy or RuntimeHostPolicy, from the status the rtctl controller writes
-- (kstatus conventions): no status or an older observedGeneration is Progressing, condition Ready True is
-- Healthy, Ready False is Degraded with the condition's message.
local hs = { status = "Progressing", message = "Waiting for the enforcers to report" }
if obj.status == nil then
  return hs
end
local generation = nil
if obj.metadata ~= nil then
  generation = obj.metadata.generation
end
local observed = obj.status.observedGeneration
if observed == nil or (generation ~= nil and observed < generation) then
  hs.message = "Waiting for the enforcers to report generation " .. tostring(generation)
  return hs
end
if obj.status.conditions ~= nil then
  for _, condition in ipairs(obj.status.conditions) do
    if condition.type == "Ready" then
      if condition.status == "True" then
        hs.status = "Healthy"
        hs.message = condition.message or "Enforced on every selected node"
      elseif condition.status == "False" then
        hs.status = "Degraded"
        hs.message = condition.message or condition.reason or "Not enforced"
      else
        hs.message = condition.message or "Readiness unknown"
      end
      return hs
    end
  end
end
return hs
