# No PostgreSQL Terraform provider is available here, so the role and database are made
# and kept in step by psql in local-exec provisioners, and the server is read back through
# terraform's own pg state backend (see README.md, "How drift is seen"). The admin
# connection comes from the PG* environment the controller gives terraform; the new
# password travels in the provisioner's environment and is read by psql's \getenv, never
# on a command line.

resource "random_password" "this" {
  length  = 32
  special = false
}

# The role and database by name: destroying it drops both. converge makes them.
resource "terraform_data" "this" {
  input = {
    database = var.database_name
    role     = var.role_name
  }
  triggers_replace = [var.database_name, var.role_name]

  provisioner "local-exec" {
    when    = destroy
    command = "sh ${path.module}/destroy.sh"
    environment = {
      TP_DATABASE = self.input.database
      TP_ROLE     = self.input.role
    }
  }
}

# The server probe (probe.sql): a view in the admin database that answers terraform's pg
# backend with every database (owner, comment) and role (login, connection limit). Made
# here before the first read; every converge makes it again, current.
resource "terraform_data" "probe" {
  provisioner "local-exec" {
    command = "sh ${path.module}/probe.sh"
  }
}

# What the server has now, read at every plan. Until this module's resources exist, the
# read waits for the apply.
data "terraform_remote_state" "server" {
  backend = "pg"
  config = {
    # host, port, user, password and database come from PG* in the environment; the pg
    # backend's driver knows no sslmode prefer or allow (see README.md)
    conn_str             = "postgres://?sslmode=${local.probe_sslmode}"
    schema_name          = "terraplane"
    skip_schema_creation = true
    skip_table_creation  = true
    skip_index_creation  = true
  }
  defaults = {
    databases          = "{}"
    roles              = "{}"
    server_version_num = "0"
  }
  depends_on = [terraform_data.this, terraform_data.probe]
}

locals {
  probe_sslmode = contains(["prefer", "allow"], var.ssl_mode) ? "disable" : var.ssl_mode

  server   = data.terraform_remote_state.server.outputs
  database = try(jsondecode(local.server.databases)[var.database_name], null)
  role     = try(jsondecode(local.server.roles)[var.role_name], null)
  major    = floor(tonumber(local.server.server_version_num) / 10000)
  promised = try(tonumber(split(".", var.engine_version)[0]), local.major) # no promise: whatever runs

  # How the server differs from what this module asks for; empty when it does not.
  drift = concat(
    local.database == null ? ["database ${var.database_name} is missing"] : [],
    local.role == null ? ["role ${var.role_name} is missing"] : [],
    local.database != null && try(local.database.owner, "") != var.role_name ? ["database owner is ${try(local.database.owner, "")}"] : [],
    local.role != null && try(local.role.connection_limit, var.connection_limit) != var.connection_limit ? ["connection limit is ${try(local.role.connection_limit, "")}"] : [],
    local.role != null && !try(local.role.login, true) ? ["role cannot log in"] : [],
    local.major != local.promised ? ["server runs PostgreSQL ${local.major}"] : [],
    local.database != null && try(local.database.comment, "") == "" ? ["database is not marked by a converge"] : [],
  )

  # The mark of the last converge: converge.sh writes it as the database's comment, so it
  # reads back unchanged while the server is in step, and is new when anything drifted.
  mark = length(local.drift) == 0 ? try(local.database.comment, "") : "managed by Terraplane, converged ${plantimestamp()}"
}

# Creates the role and database, or brings them back in step: replaced (re-run) when an
# input changes or the server drifted. Replacing it destroys nothing.
resource "terraform_data" "converge" {
  triggers_replace = {
    mark             = local.mark
    connection_limit = var.connection_limit
    engine_version   = var.engine_version
  }
  provisioner "local-exec" {
    command = "sh ${path.module}/converge.sh"
    environment = {
      TP_DATABASE         = terraform_data.this.output.database
      TP_ROLE             = terraform_data.this.output.role
      TP_PASSWORD         = random_password.this.result
      TP_ENGINE_VERSION   = var.engine_version
      TP_CONNECTION_LIMIT = tostring(var.connection_limit)
      TP_MARK             = local.mark
      TP_DRIFT            = join("; ", local.drift)
    }
  }
}
