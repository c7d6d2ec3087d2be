"""incubate.fleet.utils: helpers scripts use around fleet training (fleet_util.FleetUtil)."""
