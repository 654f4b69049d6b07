"""generators/aixi"""
