-- The server probe: a view that answers terraform's pg state backend (which reads
-- "SELECT data FROM terraplane.states WHERE name = 'default'") with a state whose outputs
-- describe every database and role, so that a plan sees the server as it is. It reads only
-- catalogs every user may read; it stores nothing. Shared by every database the bundled
-- module makes on this server, and (re)made under a lock by each converge.
BEGIN;
SELECT pg_advisory_xact_lock(hashtext('terraplane.states'));
CREATE SCHEMA IF NOT EXISTS terraplane;
CREATE OR REPLACE VIEW terraplane.states AS
SELECT 'default'::text AS name, json_build_object(
	'version', 4,
	'terraform_version', '1.0.0',
	'serial', 1,
	'lineage', 'terraplane-server-probe',
	'outputs', json_build_object(
		'databases', json_build_object('type', 'string', 'value', (
			SELECT coalesce(json_object_agg(d.datname, json_build_object(
				'owner', pg_get_userbyid(d.datdba),
				'comment', coalesce(shobj_description(d.oid, 'pg_database'), ''))), '{}')::text
			FROM pg_database d)),
		'roles', json_build_object('type', 'string', 'value', (
			SELECT coalesce(json_object_agg(r.rolname, json_build_object(
				'login', r.rolcanlogin,
				'connection_limit', r.rolconnlimit)), '{}')::text
			FROM pg_roles r)),
		'server_version_num', json_build_object('type', 'string', 'value', current_setting('server_version_num'))),
	'resources', json_build_array())::text AS data;
GRANT USAGE ON SCHEMA terraplane TO PUBLIC;
GRANT SELECT ON terraplane.states TO PUBLIC;
COMMIT;
