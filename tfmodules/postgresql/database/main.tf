# No PostgreSQL Terraform provider is available here, so the role and database are made
# by psql in create- and destroy-time provisioners. The admin connection comes from the
# PG* environment the controller gives terraform; the new password travels in the
# provisioner's environment and is read by psql's \getenv, never on a command line.

resource "random_password" "this" {
  length  = 32
  special = false
}

resource "terraform_data" "this" {
  input = {
    database = var.database_name
    role     = var.role_name
  }
  triggers_replace = [var.database_name, var.role_name]

  provisioner "local-exec" {
    command = "sh ${path.module}/create.sh"
    environment = {
      TP_DATABASE         = var.database_name
      TP_ROLE             = var.role_name
      TP_PASSWORD         = random_password.this.result
      TP_ENGINE_VERSION   = var.engine_version
      TP_CONNECTION_LIMIT = tostring(var.connection_limit)
    }
  }

  provisioner "local-exec" {
    when    = destroy
    command = "sh ${path.module}/destroy.sh"
    environment = {
      TP_DATABASE = self.input.database
      TP_ROLE     = self.input.role
    }
  }
}
